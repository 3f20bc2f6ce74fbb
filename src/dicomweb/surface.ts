/**
 * The DICOMweb origin (PS3.18): QIDO-RS search, WADO-RS retrieval and STOW-RS storage of the API
 * key's site's studies. Instances stored here take the same path as C-STORE on the DICOM listener
 * (src/domain/imaging/instance-store.ts); those retrieved are the stored files, unchanged.
 */
import type { FastifyInstance } from 'fastify';
import { whileStoredPathLocked } from '../domain/imaging/stored-path-lock.ts';
import { isIndexedPath } from '../domain/imaging/indexed-path.ts';
import { renderJsonError, type HttpSurface } from '../platform/http/surface.ts';
import type { Services } from '../platform/services.ts';
import { workerNumber } from '../platform/worker.ts';
import { StorageLayout } from '../storage/dicom/layout.ts';
import { StoredFileCache, workerFileCacheOptions } from '../storage/dicom/stored-file-cache.ts';
import { storeLimits } from '../storage/dicom/store-limits.ts';
import { webWorkerTemporaryFolder } from '../storage/dicom/temporary-folders.ts';
import { registerBrowserCors } from './browser-cors.ts';
import { registerQidoRoutes } from './qido-routes.ts';
import { registerRenderedRoutes } from './rendered-routes.ts';
import { registerStowRoutes } from './stow-routes.ts';
import { installViewingTokenAuthentication } from './viewing-token-auth.ts';
import { registerWadoRoutes } from './wado-routes.ts';

/** This origin's folder for STOW-RS transfers: its own (node and worker), so its recovery touches only its own. */
export function stowTemporaryFolder(config: Services['config']): string {
  return webWorkerTemporaryFolder(config.dicomStorageDir, config.nodeId ?? 'local', workerNumber() ?? 1);
}

export const dicomwebSurface: HttpSurface = {
  name: 'dicomweb',
  title: 'Clinical Gateway DICOMweb',
  description:
    "QIDO-RS, WADO-RS and STOW-RS (DICOM PS3.18) over the API key's site's studies. Instances are retrieved exactly as stored " +
    '(no transcoding) and stored through the same path as C-STORE on the DICOM listener; instances, frames and thumbnails are ' +
    'also rendered as JPEG or PNG. Authenticate with X-API-Key, or (reading only) ' +
    "with the admin app's short-lived viewing token as Authorization: Bearer.",
  auth: 'api-key',
  alsoAccepts: {
    name: 'viewingToken',
    scheme: {
      type: 'http',
      scheme: 'bearer',
      description:
        "The admin app's viewing token (cgv_...) of a signed-in user, for one site, for reading only (QIDO-RS, WADO-RS): it lasts ten minutes " +
        'and ends with the session that asked for it. STOW-RS with it is 403. A request with a bearer token never falls back to X-API-Key.',
    },
    covers: (method) => method === 'GET' || method === 'HEAD',
  },
  renderError: renderJsonError,
  async registerBeforeAuthentication(app: FastifyInstance, services: Services) {
    await registerBrowserCors(app, services.config);
    installViewingTokenAuthentication(app, services.database, services.config.adminSession.idleSeconds);
  },
  async register(app: FastifyInstance, services: Services) {
    const layout = new StorageLayout(services.config.dicomStorageDir, stowTemporaryFolder(services.config));
    const removed = await layout.prepare(
      (relativePath) => isIndexedPath(services.database, relativePath),
      (relativePath, work) => whileStoredPathLocked(services.database, relativePath, work),
    );
    if (removed > 0) services.logger.warn({ removed, surface: 'dicomweb' }, 'removed unfinished STOW-RS transfers left by a previous run');
    app.addHook('onClose', async () => layout.close());
    const { maxInstanceBytes, minFreeDiskBytes } = services.config.limits.dicom;
    const limits = storeLimits(services.config.dicomStorageDir, maxInstanceBytes, minFreeDiskBytes, () => services.diskSpace?.shortage() !== undefined);
    registerQidoRoutes(app, services);
    // Off (CG_DICOM_FILE_CACHE_SIZE 0, the default): no cache at all, so retrieval is exactly as without one.
    const fileCache = services.config.dicomFileCacheBytes > 0
      ? new StoredFileCache(workerFileCacheOptions(services.config.dicomFileCacheBytes, services.config.workers), services.metrics?.dicomFileCacheLookup)
      : undefined;
    if (fileCache) {
      services.metrics?.watchDicomFileCache(fileCache);
      app.addHook('onClose', async () => fileCache.clear());
    }
    registerWadoRoutes(app, services, fileCache);
    registerRenderedRoutes(app, services);
    registerStowRoutes(app, services, { layout, storeLimits: limits, maxBodyBytes: services.config.limits.dicomweb.maxStowBytes });
  },
};
