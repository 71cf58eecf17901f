/** Test helper for SSE answers: a stream opens with a `retry:` hint, and chunks need not align with frames. */

/** Reads a stream until its first event frame (an `id:` line) has arrived, or it ends; the text read. */
export async function readUntilEvent(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<string> {
  const decoder = new TextDecoder()
  let text = ''
  while (!/^id: /m.test(text)) {
    const { value, done } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
  }
  return text
}
