/** An HTTP-level refusal raised by platform code (auth, content negotiation) before the domain runs. */
export class HttpProblem extends Error {
  override readonly name = 'HttpProblem';
  readonly statusCode: number;
  readonly code: string;
  readonly details?: unknown;
  readonly headers: Record<string, string>;

  constructor(statusCode: number, code: string, message: string, options: { details?: unknown; headers?: Record<string, string> } = {}) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}
