/** A JSON text a person typed, parsed; an empty text is no value. Throws a message naming the field. */
export function parseJson(text: string, field: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${field} is not valid JSON: ${(err as Error).message}`);
  }
}
