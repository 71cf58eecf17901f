// The part of autocannon 8's library API the benchmarks use (the package ships no types).
declare module 'autocannon' {
  type Histogram = {
    average: number
    mean: number
    p50: number
    p90: number
    p99: number
    max: number
  }
  export type Request = {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
    setupRequest?: (req: Request, context: Record<string, unknown>) => Request
    onResponse?: (status: number, body: string, context: Record<string, unknown>) => void
  }
  export type Options = {
    url: string
    connections?: number
    duration?: number
    amount?: number
    method?: string
    headers?: Record<string, string>
    body?: string
    requests?: Request[]
    timeout?: number
  }
  export type Result = {
    requests: Histogram & { total: number; sent: number }
    latency: Histogram
    duration: number
    start: Date
    finish: Date
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
  }
  function autocannon(opts: Options): Promise<Result> & { stop(): void }
  export default autocannon
}
