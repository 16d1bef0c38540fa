import { z } from 'zod';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Environment variables of the web extension context (spread into configSchema; README's configuration table mirrors it). */
export const extensionConfigShape = {
  /** Wall-clock bound of reading one PDF's text (parse + pages), in ms (infra/pdf). */
  PDF_READ_TIMEOUT_MS: positiveInt(30_000),
  /** Largest PDF `POST /extension/ai/pdf` accepts, in bytes (refused while streaming). */
  EXTENSION_PDF_MAX_BYTES: positiveInt(20 * 1024 * 1024),
  /** Most pages of a PDF read for `POST /extension/ai/pdf`. */
  EXTENSION_PDF_MAX_PAGES: positiveInt(300),
  /** Largest `data.html` of `POST /extension/process`, in UTF-8 bytes. */
  EXTENSION_MAX_HTML_BYTES: positiveInt(2 * 1024 * 1024),
  /** Most characters of page text (given, or read from the HTML) handed to a flow or a model. */
  EXTENSION_MAX_TEXT_CHARS: positiveInt(200_000),
  /** Default model of the extension as `provider:model` (an organization's setting wins); empty = the LLM catalogue's first offline model. */
  EXTENSION_DEFAULT_MODEL: z.string().default(''),
  /** Comma-separated `provider:model` list the extension may choose from (with the default); empty = every model of the catalogue. */
  EXTENSION_ALLOWED_MODELS: z.string().default(''),
  /** Messages kept in one extension chat (a replacement with more is refused). */
  EXTENSION_CHAT_MAX_MESSAGES: positiveInt(50),
} satisfies Record<string, z.ZodType>;
