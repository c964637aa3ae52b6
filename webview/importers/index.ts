// The one list of importers: the first whose match() accepts the file opens it.
import { onnxImporter } from './onnx';
import { qatGraphImporter } from './qatGraph';
import type { Graph, Importer } from './types';

export const importers: readonly Importer[] = [qatGraphImporter, onnxImporter];

export function importerFor(bytes: Uint8Array, fileName: string): Importer {
  const importer = importers.find((i) => i.match(bytes, fileName));
  if (!importer)
    throw new Error(
      `${fileName || 'This file'} is not a format this view opens (${importers.map((i) => i.format).join(', ')}).`,
    );
  return importer;
}

export const openModel = (bytes: Uint8Array, fileName: string): Graph => importerFor(bytes, fileName).open(bytes);
