/**
 * The readable-text port: the main text of an HTML page a browser sent (adapter: `infra/html/`,
 * @mozilla/readability over linkedom; scripts never run, nothing is fetched). Bounded in input
 * bytes (DomainError `HTML_TOO_LARGE`, kind `too_large`) and output characters (cut, `truncated`).
 */
export interface HtmlTextOptions {
  /** Largest HTML accepted, in UTF-8 bytes. */
  maxBytes: number;
  /** Characters of text kept; the rest is dropped and `truncated` is set. */
  maxChars: number;
}

export interface HtmlText {
  title: string | null;
  text: string;
  chars: number;
  truncated: boolean;
  /** 'readability' when the article extractor found the main content; 'body' when the whole visible text was used. */
  method: 'readability' | 'body';
}

export interface HtmlReader {
  read(html: string, options: HtmlTextOptions): HtmlText;
}
