/**
 * `npx tsx scripts/make-sample-files.ts`: writes the small upload samples of fixtures/files/ — one good file of
 * each allowed type and deliberately bad ones (macro document, encrypted PDF, content that lies about its type).
 * The files are committed; this script documents how they were made.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { strToU8, zipSync } from 'fflate'

const dir = new URL('../fixtures/files/', import.meta.url)
mkdirSync(dir, { recursive: true })
const write = (name: string, data: Uint8Array | string) => writeFileSync(new URL(name, dir), data)

const pdf = (extra = '') =>
  `%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n` +
  `trailer << /Root 1 0 R ${extra}>>\n%%EOF\n`

const ooxml = (main: string, contentType: string, macro = false) => {
  const types =
    `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    `<Default Extension="xml" ContentType="application/xml"/><Override PartName="/${main}" ContentType="${contentType}"/></Types>`
  const files: Record<string, Uint8Array> = {
    '[Content_Types].xml': strToU8(types),
    [main]: strToU8('<?xml version="1.0" encoding="UTF-8"?><root/>'),
  }
  if (macro)
    files[main.replace(/[^/]+$/, 'vbaProject.bin')] = strToU8('Attribute VB_Name = "Module1"')
  return zipSync(files, { level: 0 })
}

const WORD = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml'
write('hello.txt', 'Hello from the mock.\n')
write('notes.md', '# Notes\n\n- one\n- two\n')
write('table.csv', 'name,count\napples,3\npears,5\n')
write('data.json', '{"items":[1,2,3]}\n')
write('document.pdf', pdf())
write('encrypted.pdf', pdf('/Encrypt 3 0 R '))
// 1x1 transparent PNG
write(
  'pixel.png',
  Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
    'base64',
  ),
)
// JPEG start-of-image, JFIF APP0 header and end-of-image
write('photo.jpg', Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex'))
// RIFF/WEBP container with a VP8L chunk header
write(
  'image.webp',
  Buffer.concat([
    Buffer.from('RIFF'),
    Buffer.from([26, 0, 0, 0]),
    Buffer.from('WEBPVP8L'),
    Buffer.from([13, 0, 0, 0, 0x2f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
  ]),
)
write('report.docx', ooxml('word/document.xml', WORD))
write('macro.docx', ooxml('word/document.xml', WORD, true))
write(
  'sheet.xlsx',
  ooxml(
    'xl/workbook.xml',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml',
  ),
)
write(
  'slides.pptx',
  ooxml(
    'ppt/presentation.xml',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml',
  ),
)
write('not-really.png', 'this is text pretending to be a picture\n')
write('binary.txt', Buffer.from([0x00, 0x01, 0xff, 0xfe, 0x00]))
console.log('wrote fixtures/files/')
