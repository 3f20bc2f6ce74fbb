import { registerHl7v3Routes, renderHl7v3Error } from '../../src/hl7v3/routes.ts';
import { renderJsonError, type HttpSurface } from '../../src/platform/http/surface.ts';

/** The HL7 origin as the composition root builds it, reduced to the v3 route. */
export const v3TestSurface: HttpSurface = {
  name: 'hl7',
  title: 'HL7 intake (test)',
  description: 'HL7 v3 route only',
  auth: 'api-key',
  // As the HL7 origin does: v3 paths answer in acknowledgements, the rest in JSON.
  renderError: (error) => (error.url.startsWith('/v3/') ? renderHl7v3Error(error) : renderJsonError(error)),
  register: (app, services) => registerHl7v3Routes(app, services),
};
