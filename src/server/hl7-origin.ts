import { renderHl7v2Error, registerHl7v2Routes } from '../hl7v2/surface.ts';
import { registerHl7v3Routes, renderHl7v3Error } from '../hl7v3/routes.ts';
import type { HttpSurface } from '../platform/http/surface.ts';

/**
 * The HL7 origin serves two surfaces that never import each other: HL7 v2 ER7 at /v2/ingest
 * (JSON answers) and HL7 v3 XML at /v3/ingest (MCCI acknowledgements). Errors on /v3/ paths are
 * acknowledgements too, so a v3 sender only ever reads XML.
 */
export const hl7Surface: HttpSurface = {
  name: 'hl7',
  title: 'Clinical Gateway HL7 intake',
  description: 'HL7 v2.5.1 messages (ER7) at POST /v2/ingest and HL7 v3 patient messages (XML) at POST /v3/ingest, for the site of the X-API-Key.',
  auth: 'api-key',
  renderError: (error) => (error.url.startsWith('/v3/') ? renderHl7v3Error(error) : renderHl7v2Error(error)),
  async register(app, services) {
    await registerHl7v2Routes(app, services);
    await registerHl7v3Routes(app, services);
  },
};
