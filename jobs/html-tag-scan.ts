/**
 * One linear pass of htmlparser2's tokenizer over a page's source, for the pre-parse bounds of the HTML jobs
 * (html-depth-cap.ts, stealth-dom/markup-budget.ts). The tokenizer calls back with source offsets only, so a
 * bound can cut ranges out of the original text without building a tree; a scan names the callbacks it needs
 * and every other token is ignored.
 */
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

const IGNORED: TokenizerCallbacks = {
  onattribdata: () => {},
  onattribentity: () => {},
  onattribend: () => {},
  onattribname: () => {},
  oncdata: () => {},
  onclosetag: () => {},
  oncomment: () => {},
  ondeclaration: () => {},
  onend: () => {},
  onopentagend: () => {},
  onopentagname: () => {},
  onprocessinginstruction: () => {},
  onselfclosingtag: () => {},
  ontext: () => {},
  ontextentity: () => {},
};

/** Tokenizes `html` once, calling `callbacks` (HTML mode, entities decoded as `decodeEntities` says). */
export function scanHtmlTags(
  html: string,
  callbacks: Partial<TokenizerCallbacks>,
  { decodeEntities }: { decodeEntities: boolean },
): void {
  const tokenizer = new Tokenizer({ xmlMode: false, decodeEntities }, { ...IGNORED, ...callbacks });
  tokenizer.write(html);
  tokenizer.end();
}
