// What every diagnostic rule returns: offsets into the document, so rules stay free of LSP plumbing.
export type Severity = 'error' | 'warning' | 'information' | 'hint';

export interface Finding {
  code: string;
  message: string;
  severity: Severity;
  start: number;
  end: number;
}
