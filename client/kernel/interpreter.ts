// Which Python runs the kernel: the setting, else the Python extension's interpreter, else the
// workspace's .venv, else QAT Studio's own environment (made by scripts/setup.sh), else python3.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import * as vscode from 'vscode';

export interface Interpreter {
  path: string;
  source: 'setting' | 'python-extension' | 'workspace-venv' | 'qat-studio-env' | 'PATH';
}

interface PythonExtensionApi {
  environments?: { getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } };
}

export async function resolveInterpreter(resource?: vscode.Uri): Promise<Interpreter> {
  const setting = vscode.workspace.getConfiguration('qatStudio', resource).get<string>('pythonPath')?.trim();
  if (setting) return { path: setting, source: 'setting' };

  const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (ext) {
    try {
      const api = ext.isActive ? ext.exports : await ext.activate();
      const env = api.environments?.getActiveEnvironmentPath(resource);
      if (env?.path && existsSync(env.path)) return { path: env.path, source: 'python-extension' };
    } catch {
      // The Python extension is optional; fall through to the next candidate.
    }
  }

  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const venv = path.join(folder.uri.fsPath, '.venv', 'bin', 'python');
    if (existsSync(venv)) return { path: venv, source: 'workspace-venv' };
  }
  const cache = process.env.QAT_STUDIO_CACHE ?? path.join(homedir(), '.cache', 'qat-studio');
  const own = path.join(cache, 'venv', 'bin', 'python');
  if (existsSync(own)) return { path: own, source: 'qat-studio-env' };
  return { path: 'python3', source: 'PATH' };
}
