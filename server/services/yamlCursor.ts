// Where the cursor is in a (possibly half-typed) YAML document: the key path of the enclosing map and
// whether a key or a value is being typed. A small forward scan, because the yaml parser gives up on the
// very documents completion sees (a key without its colon, an unclosed `{`).

/** Path segments are map keys; '*' stands for any item of a sequence. */
export interface YamlCursor {
  path: string[];
  /** 'key': typing a key of the map at `path`; 'value': typing the value of `key` in it ('*' for a list item). */
  kind: 'key' | 'value';
  key?: string;
  /** What is already typed of the word at the cursor, and where it starts. */
  prefix: string;
  prefixStart: number;
  inFlow: boolean;
}

interface Block {
  indent: number;
  key: string;
}
interface Flow {
  kind: '{' | '[';
  path: string[];
}

const KEY = /^("[^"]*"|'[^']*'|[^\s#'"{[\]},:][^#:]*?)\s*:(?=\s|$)/;
const unquote = (k: string) => k.replace(/^(["'])(.*)\1$/, '$2').trim();

export function yamlCursor(text: string, offset: number): YamlCursor {
  const blocks: Block[] = [];
  let flows: Flow[] = [];
  let pendingKey: string | undefined;
  let token = '';
  let tokenStart = 0;
  let lineStart = 0;
  let flowIndent = 0;
  const blockPath = () => blocks.map((b) => b.key);

  // Scans flow syntax in text[from, to), stopping at a comment.
  const scanFlow = (from: number, to: number, base: string[]) => {
    for (let i = from; i < to; i++) {
      const ch = text[i];
      if (ch === '"' || ch === "'") {
        if (!token.trim()) tokenStart = i;
        let j = i + 1;
        while (j < to && text[j] !== ch) j += text[j] === '\\' && ch === '"' ? 2 : 1;
        token += text.slice(i, Math.min(j + 1, to));
        i = j;
        continue;
      }
      if (ch === '#' && (i === 0 || /\s/.test(text[i - 1]))) return;
      if (ch === '{' || ch === '[') {
        const top = flows[flows.length - 1];
        const path = !top
          ? base
          : top.kind === '['
            ? [...top.path, '*']
            : pendingKey !== undefined
              ? [...top.path, pendingKey]
              : top.path;
        flows.push({ kind: ch, path });
        pendingKey = undefined;
        token = '';
        tokenStart = i + 1;
      } else if (ch === '}' || ch === ']') {
        flows.pop();
        pendingKey = undefined;
        token = '';
        tokenStart = i + 1;
      } else if (
        ch === ':' &&
        flows[flows.length - 1]?.kind === '{' &&
        /[\s,}\]]/.test(text[i + 1] ?? ' ') &&
        pendingKey === undefined
      ) {
        pendingKey = unquote(token);
        token = '';
        tokenStart = i + 1;
      } else if (ch === ',') {
        pendingKey = undefined;
        token = '';
        tokenStart = i + 1;
      } else {
        if (!token.trim()) tokenStart = i;
        token += ch;
      }
    }
  };

  while (lineStart <= offset) {
    const nl = text.indexOf('\n', lineStart);
    const lineEnd = nl < 0 ? text.length : nl;
    const atCursor = offset <= lineEnd;
    const end = atCursor ? offset : lineEnd;
    const indent = /^ */.exec(text.slice(lineStart, lineEnd))![0].length;
    // An unclosed `{`/`[` ends where a line is no more indented than the key that opened it.
    if (flows.length && indent <= flowIndent && !/^\s*([}\]#]|$)/.test(text.slice(lineStart, lineEnd)))
      [flows, pendingKey, token] = [[], undefined, ''];
    if (flows.length) {
      scanFlow(lineStart, end, []);
    } else {
      const line = text.slice(lineStart, end);
      let col = line.length - line.trimStart().length;
      const blank = line.trim() === '' || line.trimStart().startsWith('#');
      if (!blank || atCursor) {
        let dash = false;
        // `- ` markers open sequence items; the entry they belong to stays open at the same column.
        for (let m = /^-(\s+|$)/.exec(line.slice(col)); m && col < line.length; m = /^-(\s+|$)/.exec(line.slice(col))) {
          popTo(blocks, col, true);
          blocks.push({ indent: col, key: '*' });
          col += m[0].length || 1;
          dash = true;
        }
        if (!dash) popTo(blocks, col, false);
        const content = line.slice(col);
        const key = KEY.exec(content);
        if (key) {
          const rest = content.slice(key[0].length);
          const restCol = col + key[0].length + (rest.length - rest.trimStart().length);
          const value = rest.trim();
          if (atCursor) {
            if (value.startsWith('{') || value.startsWith('[')) {
              flowIndent = col;
              scanFlow(lineStart + restCol, end, [...blockPath(), unquote(key[1])]);
            } else {
              return {
                path: blockPath(),
                kind: 'value',
                key: unquote(key[1]),
                prefix: value,
                prefixStart: lineStart + restCol,
                inFlow: false,
              };
            }
          } else if (value === '' || value.startsWith('#') || value === '|' || value === '>') {
            blocks.push({ indent: col, key: unquote(key[1]) });
          } else if (value.startsWith('{') || value.startsWith('[')) {
            flowIndent = col;
            scanFlow(lineStart + restCol, end, [...blockPath(), unquote(key[1])]);
          }
        } else if (content.startsWith('{') || content.startsWith('[')) {
          flowIndent = col;
          scanFlow(lineStart + col, end, blockPath());
        } else if (atCursor) {
          const last = blocks[blocks.length - 1];
          // A bare `- ` item under a key whose items are scalars (e.g. metrics:) is a value, not a key.
          if (dash && last?.key === '*' && !content.includes(' ')) {
            return {
              path: blockPath().slice(0, -1),
              kind: 'value',
              key: '*',
              prefix: content,
              prefixStart: lineStart + col,
              inFlow: false,
            };
          }
          return {
            path: blockPath(),
            kind: 'key',
            prefix: content.trim(),
            prefixStart: lineStart + col,
            inFlow: false,
          };
        }
      }
    }
    if (atCursor) break;
    lineStart = lineEnd + 1;
  }

  const top = flows[flows.length - 1];
  const prefix = token.trim();
  const prefixStart = prefix ? tokenStart : offset;
  if (!top) return { path: blockPath(), kind: 'key', prefix: '', prefixStart: offset, inFlow: false };
  if (top.kind === '[') return { path: top.path, kind: 'value', key: '*', prefix, prefixStart, inFlow: true };
  if (pendingKey !== undefined)
    return { path: top.path, kind: 'value', key: pendingKey, prefix, prefixStart, inFlow: true };
  return { path: top.path, kind: 'key', prefix, prefixStart, inFlow: true };
}

function popTo(blocks: Block[], col: number, dash: boolean): void {
  while (blocks.length) {
    const top = blocks[blocks.length - 1];
    if (top.indent > col || (top.indent === col && (!dash || top.key === '*'))) blocks.pop();
    else break;
  }
}
