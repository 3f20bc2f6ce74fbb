/**
 * The administration and clinical web application (issue 7): the web app's files, and the JSON
 * API under /api that backs its pages, on the admin origin. Authentication is by session cookie
 * (the platform checks no API key here); every API route below the sign-in needs a session, and
 * every state-changing one a CSRF token.
 */
import type { FastifyInstance } from 'fastify';
import { refuseUnstorableText } from '../platform/http/storable-text.ts';
import { registerMetricsRoute } from '../platform/metrics/metrics-route.ts';
import type { HttpSurface } from '../platform/http/surface.ts';
import type { Services } from '../platform/services.ts';
import { renderAdminError } from './render-error.ts';
import { registerAuditRoutes } from './routes/audit-routes.ts';
import { registerAutomationTokenRoutes } from './routes/automation-token-routes.ts';
import { registerDataAccessRoutes } from './routes/data-access-routes.ts';
import { registerExportRoutes } from './routes/export-routes.ts';
import { registerClientRoutes } from './routes/client-routes.ts';
import { registerConnectivityRoutes } from './routes/connectivity-routes.ts';
import { registerKeyRoutes } from './routes/key-routes.ts';
import { registerDicomDestinationRoutes } from './routes/dicom-destination-routes.ts';
import { registerMessageRoutes } from './routes/message-routes.ts';
import { registerPatientRoutes } from './routes/patient-routes.ts';
import { registerRefusedTrafficRoutes } from './routes/refused-traffic-routes.ts';
import { registerActivityRoutes } from './routes/activity-routes.ts';
import { registerReportRoutes } from './routes/report-routes.ts';
import { registerServiceAdminRoutes } from './routes/service-admin-routes.ts';
import { registerSessionProbe, registerSessionRoutes, registerSignIn } from './routes/session-routes.ts';
import { registerSiteRoutes } from './routes/site-routes.ts';
import { registerUserRoutes } from './routes/user-routes.ts';
import { registerViewingTokenRoutes } from './routes/viewing-token-routes.ts';
import { registerWorklistRoutes } from './routes/worklist-routes.ts';
import { installSecurityHeaders } from './security-headers.ts';
import { requireSession } from './session/authenticate.ts';
import { registerStaticAssets } from './static-assets.ts';
import { registerViewerAssets } from './viewer/viewer-assets.ts';

export const adminSurface: HttpSurface = {
  name: 'admin',
  title: 'Clinical Gateway administration',
  description:
    'The JSON API behind the administration and clinical web app: sites, users, API keys, integration clients, worklist, patients, reports, HL7 message log, connectivity and audit. Sign in with POST /api/session; send the returned csrf_token as X-CSRF-Token on every state-changing request. Scripts may instead send a service administrator\'s automation token as Authorization: Bearer <token> (no cookie, no CSRF token).',
  auth: 'session',
  renderError: renderAdminError,
  async register(app: FastifyInstance, services: Services) {
    app.decorateRequest('adminSession', null);
    installSecurityHeaders(app, services.config);
    // Form fields are the body's (or query's) top-level names, as the web app knows them.
    refuseUnstorableText(app, (_part, path) => String(path[0] ?? ''));
    registerStaticAssets(app);
    registerMetricsRoute(app, services);
    registerViewerAssets(app);
    await registerSignIn(app, services);
    await registerSessionProbe(app, services);
    await app.register(async (scope) => {
      requireSession(scope, services.database, services.config.adminSession.idleSeconds);
      await registerSessionRoutes(scope, services);
      await registerSiteRoutes(scope, services);
      await registerUserRoutes(scope, services);
      await registerServiceAdminRoutes(scope, services);
      await registerAutomationTokenRoutes(scope, services);
      await registerKeyRoutes(scope, services);
      await registerClientRoutes(scope, services);
      await registerWorklistRoutes(scope, services);
      await registerPatientRoutes(scope, services);
      await registerReportRoutes(scope, services);
      await registerViewingTokenRoutes(scope, services);
      await registerMessageRoutes(scope, services);
      await registerRefusedTrafficRoutes(scope, services);
      await registerActivityRoutes(scope, services);
      await registerConnectivityRoutes(scope, services);
      await registerDicomDestinationRoutes(scope, services);
      await registerAuditRoutes(scope, services);
      await registerDataAccessRoutes(scope, services);
      await registerExportRoutes(scope, services);
    });
  },
};
