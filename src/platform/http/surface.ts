import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';

export type HttpSurfaceName = 'fhir' | 'hl7' | 'mpps' | 'connectivity' | 'admin' | 'dicomweb';

/** A failure about to be sent, in neutral terms; each surface renders it in its own format. */
export interface HttpErrorInfo {
  statusCode: number;
  /** Stable, greppable: unauthenticated, not-found, invalid, conflict, unavailable, internal, … */
  code: string;
  message: string;
  requestId: string;
  /** The request path, for origins that serve more than one format (HL7 v2 JSON and v3 XML). */
  url: string;
  details?: unknown;
}

export interface RenderedError {
  contentType: string;
  body: unknown;
}

export interface HttpSurface {
  name: HttpSurfaceName;
  /** OpenAPI info.title and info.description of this origin's document. */
  title: string;
  description: string;
  /** api-key: X-API-Key checked by the platform before every route; session: the surface checks. */
  auth: 'api-key' | 'session';
  /**
   * Another credential the origin accepts besides its `auth` one, for the methods `covers`
   * selects, as the OpenAPI document declares it (DICOMweb: the viewing token, reads only).
   */
  alsoAccepts?: { name: string; scheme: { type: 'http'; scheme: 'bearer'; description: string }; covers(method: string): boolean };
  renderError(error: HttpErrorInfo): RenderedError;
  /**
   * Plugins that must act before authentication: a CORS preflight carries no credentials and is
   * answered before the key is asked for, and compression applies to refusals too.
   */
  registerBeforeAuthentication?(app: FastifyInstance, services: Services): Promise<void>;
  register(app: FastifyInstance, services: Services): Promise<void>;
}

/** The JSON error shape of the HL7, MPPS, connectivity and admin origins. */
export function renderJsonError(error: HttpErrorInfo): RenderedError {
  const details = error.details as { field?: string } | undefined;
  return {
    contentType: 'application/json; charset=utf-8',
    body: {
      error: {
        code: error.code,
        message: error.message,
        ...(details?.field ? { field: details.field } : {}),
        ...(error.statusCode >= 500 ? { request_id: error.requestId } : {}),
      },
    },
  };
}
