import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpErrorInfo, HttpSurface } from './surface.ts';

/**
 * Requests the framework refuses before any route runs: a path with bad percent-encoding
 * (RFC 3986 section 2.1), and requests Node's HTTP parser cannot read at all (raw bytes outside
 * ASCII in the request target, broken header lines: RFC 9112 section 3). Without these handlers
 * Fastify answers them with its own JSON; each origin answers in its own error format instead.
 */

type Refusal = Pick<HttpErrorInfo, 'statusCode' | 'code' | 'message'>;

function frameworkRefusal(error: FastifyError): Refusal {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return { statusCode: 400, code: 'invalid', message: 'the request path is not a valid URL: a "%" must start a percent-encoded byte such as %2F (RFC 3986 section 2.1)' };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { statusCode: 414, code: 'invalid', message: 'a segment of the request path is longer than this origin accepts' };
    default:
      return { statusCode: 500, code: 'internal', message: 'an internal error occurred; quote the request id when reporting it' };
  }
}

/** Fastify's frameworkErrors option: the request and reply exist, but no route or hook ran. */
export function frameworkErrorHandler(send: (request: FastifyRequest, reply: FastifyReply, error: Refusal) => FastifyReply) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.header('x-request-id', request.id);
    send(request, reply, frameworkRefusal(error));
  };
}

function parserRefusal(error: NodeJS.ErrnoException): Refusal {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { statusCode: 408, code: 'timeout', message: 'the request was not received in time' };
  if (error.code === 'HPE_HEADER_OVERFLOW') return { statusCode: 431, code: 'too-large', message: 'the request headers are larger than this origin accepts' };
  if (error.code === 'HPE_INVALID_URL') {
    return { statusCode: 400, code: 'invalid', message: 'the request target is not a valid URL: characters outside ASCII must be percent-encoded as UTF-8 (RFC 3986 section 2.1)' };
  }
  return { statusCode: 400, code: 'invalid', message: 'the request is not valid HTTP/1.1 (RFC 9112)' };
}

/** Fastify's clientErrorHandler option: Node could not parse the request, so the answer is written to the socket. */
export function clientErrorHandler(surface: HttpSurface) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const requestId = randomUUID();
    const refusal = parserRefusal(error);
    const rendered = surface.renderError({ ...refusal, requestId, url: '' });
    const body = Buffer.from(typeof rendered.body === 'string' ? rendered.body : JSON.stringify(rendered.body));
    const head =
      `HTTP/1.1 ${refusal.statusCode} ${STATUS_CODES[refusal.statusCode]}\r\n` +
      `content-type: ${rendered.contentType}\r\ncontent-length: ${body.length}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n`;
    // One write, as Node's own handler does, before the socket is closed.
    if (socket.writable) socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
    socket.destroy(error);
  };
}
