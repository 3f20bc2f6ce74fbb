/** A site's users: list, create, change role, reset password, deactivate and reactivate. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { resetPassword } from '../../domain/users/password-reset.ts';
import { createUser, findUserById, listUsers, updateUser, type UserRole } from '../../domain/users/users.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Services } from '../../platform/services.ts';
import { actorOf, siteForArea } from '../access.ts';
import { sessionOf } from '../session/authenticate.ts';
import { errorResponses, userSchema, uuidParam } from './schemas.ts';
import { userView } from './views.ts';

const tags = ['users'];
const siteRoles = ['site-admin', 'clinician'] as const;
const siteParams = { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } } as const;
const userParams = { type: 'object', required: ['siteId', 'userId'], properties: { siteId: uuidParam, userId: uuidParam } } as const;
const passwordField = { type: 'string', maxLength: 1024, description: 'at least 12 characters; omit to have one generated and shown once' } as const;

export async function registerUserRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.get(
    '/api/sites/:siteId/users',
    { schema: { summary: 'The site\'s users', tags, params: siteParams, response: { 200: { type: 'object', properties: { users: { type: 'array', items: userSchema } } }, ...errorResponses } } },
    async (request: FastifyRequest<{ Params: { siteId: string } }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'users');
      return { users: (await listUsers(database, { siteId: site.id })).map(userView) };
    },
  );

  app.post(
    '/api/sites/:siteId/users',
    {
      schema: {
        summary: 'Create a user of the site',
        tags,
        params: siteParams,
        body: {
          type: 'object',
          required: ['email', 'role'],
          additionalProperties: false,
          properties: { email: { type: 'string', maxLength: 320 }, role: { type: 'string', enum: siteRoles }, password: passwordField },
        },
        response: { 201: { type: 'object', properties: { user: userSchema, generated_password: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string }; Body: { email: string; role: UserRole; password?: string } }>, reply) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'users');
      const { email, role, password } = request.body;
      const created = await database.transaction((tx) =>
        createUser(tx, { siteId: site.id, email, role, ...(password ? { password } : {}) }, actorOf(request)),
      );
      return reply.code(201).send({ user: userView(created.user), ...(created.generatedPassword ? { generated_password: created.generatedPassword } : {}) });
    },
  );

  app.patch(
    '/api/sites/:siteId/users/:userId',
    {
      schema: {
        summary: 'Change a user\'s role, or deactivate / reactivate them',
        description: 'A deactivated user cannot sign in; their sessions and API keys stop working at once.',
        tags,
        params: userParams,
        body: { type: 'object', additionalProperties: false, properties: { role: { type: 'string', enum: siteRoles }, active: { type: 'boolean' } } },
        response: { 200: userSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; userId: string }; Body: { role?: UserRole; active?: boolean } }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'users');
      const target = await siteUser(site.id, request.params.userId);
      const self = sessionOf(request).user.id === target.id;
      if (self && (request.body.active === false || (request.body.role !== undefined && request.body.role !== target.role))) {
        throw new DomainError('business-rule', 'you cannot deactivate yourself or change your own role; ask another admin', [
          { message: 'you cannot change your own role or deactivate yourself', location: request.body.active === false ? 'active' : 'role' },
        ]);
      }
      const input = { ...(request.body.role !== undefined ? { role: request.body.role } : {}), ...(request.body.active !== undefined ? { active: request.body.active } : {}) };
      return userView(await database.transaction((tx) => updateUser(tx, target.id, input, actorOf(request))));
    },
  );

  app.post(
    '/api/sites/:siteId/users/:userId/password',
    {
      schema: {
        summary: 'Reset a user\'s password',
        description: 'Sets the given password, or generates one and returns it once. The user\'s sessions end.',
        tags,
        params: userParams,
        body: { type: 'object', additionalProperties: false, properties: { password: passwordField } },
        response: { 200: { type: 'object', properties: { generated_password: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; userId: string }; Body: { password?: string } }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'users');
      const target = await siteUser(site.id, request.params.userId);
      const session = sessionOf(request);
      const { generatedPassword } = await database.transaction((tx) =>
        resetPassword(tx, target.id, request.body.password, actorOf(request), target.id === session.user.id ? { keepSessionHash: session.idHash } : {}),
      );
      return generatedPassword ? { generated_password: generatedPassword } : {};
    },
  );

  async function siteUser(siteId: string, userId: string) {
    const user = await findUserById(database, userId);
    if (!user || user.siteId !== siteId) throw new HttpProblem(404, 'not-found', 'no such user in this site');
    return user;
  }
}
