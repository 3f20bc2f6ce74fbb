import { registerHl7v3Routes } from '../../src/hl7v3/routes.ts';
import { renderJsonError, type HttpSurface } from '../../src/platform/http/surface.ts';

/** The HL7 origin as the composition root builds it, reduced to the v3 route. */
export const v3TestSurface: HttpSurface = {
  name: 'hl7',
  title: 'HL7 intake (test)',
  description: 'HL7 v3 route only',
  auth: 'api-key',
  renderError: renderJsonError,
  register: (app, services) => registerHl7v3Routes(app, services),
};
