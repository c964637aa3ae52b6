// What under out/ counts as an artifact (exported, built or deployed). Free of the vscode module.
export type ArtifactKind = 'onnx' | 'pt2' | 'tvm' | 'deploy';

/** What counts as an artifact, by its path relative to out/ (exported for tests). */
export function artifactKind(rel: string): { kind: ArtifactKind; folder: boolean } | undefined {
  const parts = rel.split(/[\\/]/);
  if (parts.length === 1 && /^deploy-/.test(parts[0])) return { kind: 'deploy', folder: true };
  if (/\.onnx$/i.test(rel)) return { kind: 'onnx', folder: false };
  if (/\.pt2$/i.test(rel)) return { kind: 'pt2', folder: false };
  if (/^tvm-/.test(parts[0]) && /\.(so|dylib|dll|tar)$/i.test(rel)) return { kind: 'tvm', folder: false };
  return undefined;
}
