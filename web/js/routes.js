// @ts-check
import { accountPage } from './pages/account.js';
import { auditPage } from './pages/audit.js';
import { dataAccessPage } from './pages/data-access.js';
import { exportsPage } from './pages/exports.js';
import { clientsPage } from './pages/clients.js';
import { connectivityPage } from './pages/connectivity.js';
import { dicomDestinationsPage } from './pages/dicom-destinations.js';
import { keysPage } from './pages/keys.js';
import { messagePage, messagesPage } from './pages/messages.js';
import { patientPage } from './pages/patient.js';
import { patientsPage } from './pages/patients.js';
import { refusedTrafficPage } from './pages/refused-traffic.js';
import { activityPage } from './pages/activity.js';
import { siteOverviewPage } from './pages/site-overview.js';
import { sitesPage } from './pages/sites.js';
import { studyPage } from './pages/study.js';
import { serviceAdminsPage } from './pages/service-admins.js';
import { usersPage } from './pages/users.js';
import { worklistPage } from './pages/worklist.js';

/**
 * @typedef {{ params: Record<string, string>; query: URLSearchParams; user: any; site: any; navigate: (path: string) => void; refresh: () => void; forgetSites: () => void }} PageContext
 * @typedef {{ title: string; body: any }} Page
 * @typedef {{ path: string; area: string; page: (context: PageContext) => Promise<Page> }} Route
 */

/** @type {Route[]} */
export const routes = [
  { path: '/sites', area: 'sites', page: sitesPage },
  { path: '/audit', area: 'serviceAudit', page: auditPage },
  { path: '/refused-traffic', area: 'serviceAudit', page: refusedTrafficPage },
  { path: '/admins', area: 'serviceAdmins', page: serviceAdminsPage },
  { path: '/account', area: 'account', page: accountPage },
  { path: '/sites/:siteId', area: 'siteSettings', page: siteOverviewPage },
  { path: '/sites/:siteId/users', area: 'users', page: usersPage },
  { path: '/sites/:siteId/keys', area: 'keys', page: keysPage },
  { path: '/sites/:siteId/clients', area: 'clients', page: clientsPage },
  { path: '/sites/:siteId/worklist', area: 'worklist', page: worklistPage },
  { path: '/sites/:siteId/studies/:studyUid', area: 'worklist', page: studyPage },
  { path: '/sites/:siteId/patients', area: 'worklist', page: patientsPage },
  { path: '/sites/:siteId/patients/:patientId', area: 'worklist', page: patientPage },
  { path: '/sites/:siteId/messages', area: 'messages', page: messagesPage },
  { path: '/sites/:siteId/messages/:messageId', area: 'messages', page: messagePage },
  { path: '/sites/:siteId/refused-traffic', area: 'messages', page: refusedTrafficPage },
  { path: '/sites/:siteId/activity', area: 'messages', page: activityPage },
  { path: '/sites/:siteId/connectivity', area: 'connectivity', page: connectivityPage },
  { path: '/sites/:siteId/dicom-destinations', area: 'connectivity', page: dicomDestinationsPage },
  { path: '/sites/:siteId/audit', area: 'audit', page: auditPage },
  { path: '/sites/:siteId/data-access', area: 'audit', page: dataAccessPage },
  { path: '/sites/:siteId/exports', area: 'exports', page: exportsPage },
];
