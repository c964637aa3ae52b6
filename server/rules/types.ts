// What every diagnostic rule returns: offsets into the document, so rules stay free of LSP plumbing.
export type Severity = 'error' | 'warning' | 'information' | 'hint';

/** One text replacement, in document offsets. */
export interface Edit {
  start: number;
  end: number;
  newText: string;
}

/** A quick fix: the services turn it into a CodeAction with a WorkspaceEdit. */
export interface Fix {
  title: string;
  edits: Edit[];
  preferred?: boolean;
}

export interface Finding {
  code: string;
  message: string;
  severity: Severity;
  start: number;
  end: number;
  fixes?: Fix[];
  /** More than the one-sentence message (markdown): shown on hover over the finding. */
  detail?: string;
}
