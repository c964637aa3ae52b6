// Semantic tokens where a grammar cannot know: module names. In a config, the names in overrides[].match
// that are modules of the exported graph; in a Python script, module attributes, with a modifier saying
// whether the applicable config quantizes the module (int8) or keeps it float.
import { assignsSelf } from '../analysis/selfAttributes';
import { SemanticTokensBuilder, type SemanticTokens, type SemanticTokensLegend } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { overrideMatches, makeContext } from '../rules/yaml/context';
import { parsedConfig } from './configDiagnostics';
import { modulePathsFor, type ModelKnowledge } from './modelIndex';
import { parsePython } from './pythonDiagnostics';
import { pythonBudget } from '../util/budget';
import { configForScript, effectiveQConfig, type OpenText } from './scriptConfig';

export const TOKEN_TYPES = ['namespace', 'property'] as const;
export const TOKEN_MODIFIERS = ['int8', 'float'] as const;
export const semanticLegend: SemanticTokensLegend = {
  tokenTypes: [...TOKEN_TYPES],
  tokenModifiers: [...TOKEN_MODIFIERS],
};

interface Token {
  start: number;
  length: number;
  type: number;
  modifiers: number;
}

function encode(doc: TextDocument, tokens: Token[]): SemanticTokens {
  const builder = new SemanticTokensBuilder();
  tokens.sort((a, b) => a.start - b.start);
  for (const t of tokens) {
    const p = doc.positionAt(t.start);
    builder.push(p.line, p.character, t.length, t.type, t.modifiers);
  }
  return builder.build();
}

export function configTokens(doc: TextDocument, model: ModelKnowledge | undefined): SemanticTokens {
  if (!model) return { data: [] };
  const text = doc.getText();
  const parsed = parsedConfig(doc.uri, text);
  if (parsed.errors.length > 0) return { data: [] };
  const known = new Set(model.modules.map((m) => m.path));
  const tokens: Token[] = [];
  for (const m of overrideMatches(makeContext(text, parsed))) {
    const raw = text.slice(m.at[0], m.at[1]);
    // Dotted names as written in the source, with `\.` or `\\.` between parts.
    for (const word of raw.matchAll(/[A-Za-z_][\w]*(?:\\{0,2}\.\w+)*/g)) {
      const name = word[0].replace(/\\/g, '');
      // The longest prefix that is a module (`layer4\..*` names layer4).
      let candidate = name;
      let length = word[0].length;
      while (candidate && !known.has(candidate)) {
        const cut = candidate.lastIndexOf('.');
        if (cut < 0) {
          candidate = '';
          break;
        }
        candidate = candidate.slice(0, cut);
        length = rawLength(word[0], candidate);
      }
      if (candidate) tokens.push({ start: m.at[0] + word.index!, length, type: 0, modifiers: 0 });
    }
  }
  return encode(doc, tokens);
}

/** Length in the raw text of the first `name.length` characters of the unescaped name. */
function rawLength(raw: string, name: string): number {
  let seen = 0;
  for (let i = 0; i < raw.length; i++) {
    if (seen === name.length) return i;
    if (raw[i] !== '\\') seen++;
  }
  return raw.length;
}

export function pythonTokens(doc: TextDocument, open: OpenText): SemanticTokens {
  const config = configForScript(doc.uri, open);
  if (!config) return { data: [] };
  const text = doc.getText();
  const tokens: Token[] = [];
  const precisionOf = new Map<string, string | undefined>();
  parsePython(pythonBudget(text).text, doc.uri).iterate({
    enter: (node) => {
      if (node.name !== 'PropertyName' || node.node.parent?.name !== 'MemberExpression') return;
      const attribute = text.slice(node.from, node.to);
      if (!precisionOf.has(attribute)) {
        const paths = modulePathsFor(attribute, config.model);
        const isModule = paths.length > 0 && (config.model !== undefined || assignsSelf(text, attribute));
        precisionOf.set(attribute, isModule ? effectiveQConfig(config.data, paths[0]).precision : undefined);
      }
      const precision = precisionOf.get(attribute);
      if (precision)
        tokens.push({
          start: node.from,
          length: node.to - node.from,
          type: 1,
          modifiers: precision === 'int8' ? 1 : 2,
        });
    },
  });
  return encode(doc, tokens);
}
