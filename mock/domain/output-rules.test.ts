import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonShape } from './json-limits.js'
import {
  contractBreak,
  fileCountBreak,
  filenameBreak,
  fileSizeBreak,
  jsonIsInline,
  jsonLimitBreak,
  pathBreak,
  producedFileTypeBreak,
  storageBreak,
  textIsInline,
} from './output-rules.js'

const MiB = 1024 * 1024
const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'))

describe('output rules', () => {
  it('[SIZE-006] fails JSON over depth 16 or 10,000 elements, and allows exactly the limits', () => {
    let deep: unknown = {}
    for (let i = 1; i < 16; i++) deep = { a: deep }
    expect(jsonShape(deep).depth).toBe(16)
    expect(jsonLimitBreak(jsonShape(deep), 10)).toBeUndefined()
    expect(jsonLimitBreak(jsonShape({ b: deep }), 10)?.code).toBe('OUTPUT_LIMIT_EXCEEDED')
    const many = Array.from({ length: 10_000 }, () => 0)
    expect(jsonLimitBreak(jsonShape(many), 10)).toBeUndefined()
    expect(jsonLimitBreak(jsonShape([...many, 0]), 10)?.code).toBe('OUTPUT_LIMIT_EXCEEDED')
    expect(jsonLimitBreak({ depth: 1, elements: 0 }, 10 * MiB)).toBeUndefined()
    expect(jsonLimitBreak({ depth: 1, elements: 0 }, 10 * MiB + 1)?.code).toBe(
      'OUTPUT_LIMIT_EXCEEDED',
    )
  })

  it('[SIZE-005] keeps JSON inline up to 64 KiB and 100 elements in total', () => {
    fc.assert(
      fc.property(fc.nat(200), fc.integer({ min: 0, max: 128 * 1024 }), (elements, size) => {
        expect(jsonIsInline({ elements }, size)).toBe(elements <= 100 && size <= 64 * 1024)
      }),
    )
  })

  it('[SIZE-004] keeps TEXT inline up to exactly 64 KiB of UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 65_000, max: 66_000 }), fc.boolean(), (n, wide) => {
        // 'é' is 2 bytes in UTF-8: the rule counts bytes, not characters.
        const text = wide ? 'é'.repeat(Math.floor(n / 2)) : 'x'.repeat(n)
        expect(textIsInline(text)).toBe(Buffer.byteLength(text) <= 65_536)
      }),
    )
    expect(textIsInline('x'.repeat(65_536))).toBe(true)
    expect(textIsInline('x'.repeat(65_537))).toBe(false)
  })

  it('[SIZE-011][SIZE-012] limits a file to 10 MiB, an execution to 10 files and 100 MiB in total', () => {
    expect(fileSizeBreak(10 * MiB)).toBeUndefined()
    expect(fileSizeBreak(10 * MiB + 1)?.code).toBe('OUTPUT_LIMIT_EXCEEDED')
    expect(fileCountBreak(9)).toBeUndefined()
    expect(fileCountBreak(10)?.code).toBe('OUTPUT_LIMIT_EXCEEDED')
    expect(storageBreak(90 * MiB, 10 * MiB)).toBeUndefined()
    expect(storageBreak(90 * MiB, 10 * MiB + 1)?.code).toBe('OUTPUT_LIMIT_EXCEEDED')
  })

  it('[ERR-105] allows files inside attachments/ only', () => {
    expect(pathBreak(undefined)).toBeUndefined()
    expect(pathBreak('attachments/report.txt')).toBeUndefined()
    expect(pathBreak('attachments/q3/report.txt')).toBeUndefined()
    for (const p of [
      '../config/settings.txt',
      '/etc/passwd',
      'attachments/../secrets.txt',
      'attachments',
      'attachments/',
      'workspace/report.txt',
      'attachments\\..\\x.txt',
    ])
      expect(pathBreak(p)?.code, p).toBe('OUTPUT_PATH_DENIED')
  })

  it('[ERR-046][ERR-048] judges produced file names and types', () => {
    expect(filenameBreak('report.txt')).toBeUndefined()
    expect(filenameBreak('a/b.txt')?.code).toBe('INVALID_FILENAME')
    expect(producedFileTypeBreak('r.txt', 'text/plain', bytes('hello'))).toBeUndefined()
    expect(producedFileTypeBreak('r.json', 'application/json', bytes('{"a":1}'))).toBeUndefined()
    expect(producedFileTypeBreak('r.json', 'application/json', bytes('{'))?.code).toBe(
      'UNSUPPORTED_FILE_TYPE',
    )
    expect(producedFileTypeBreak('tool.exe', 'application/octet-stream', bytes('MZ'))?.code).toBe(
      'UNSUPPORTED_FILE_TYPE',
    )
    expect(producedFileTypeBreak('r.pdf', 'application/pdf', bytes('%PDF-1.7\n'))).toBeUndefined()
    expect(
      producedFileTypeBreak('r.pdf', 'application/pdf', bytes('%PDF-1.7 /Encrypt'))?.code,
    ).toBe('UNSUPPORTED_FILE_TYPE')
    expect(producedFileTypeBreak('r.png', 'image/png', bytes('not a png'))?.code).toBe(
      'UNSUPPORTED_FILE_TYPE',
    )
  })

  it('[ERR-050] mismatches a wrong type or a JSON value that breaks the entry schema', () => {
    const contract = [
      { key: 'summary', type: 'TEXT', required: true },
      {
        key: 'details',
        type: 'JSON',
        required: false,
        schema: { type: 'object', required: ['items'] },
      },
    ]
    expect(contractBreak(contract, { key: 'summary', type: 'JSON' }, true)?.code).toBe(
      'OUTPUT_SCHEMA_MISMATCH',
    )
    expect(contractBreak(contract, { key: 'summary', type: 'JSON' }, false)).toBeUndefined()
    expect(contractBreak(contract, { key: 'other', type: 'JSON' }, true)).toBeUndefined()
    expect(
      contractBreak(contract, { key: 'details', type: 'JSON', data: { items: [] } }, true),
    ).toBeUndefined()
    expect(
      contractBreak(contract, { key: 'details', type: 'JSON', data: { rows: [] } }, true)?.code,
    ).toBe('OUTPUT_SCHEMA_MISMATCH')
  })
})
