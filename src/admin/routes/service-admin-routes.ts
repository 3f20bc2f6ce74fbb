/**
 * Service admins (every site; no site of their own): list, add, reset password, deactivate and
 * reactivate. Only service admins may use these routes (others: 403); an id that is not a service
 * admin is a 404.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { resetPassword } from '../../domain/users/password-reset.ts';
import { createUser, findUserById, listUsers, updateUser } from '../../domain/users/users.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Services } from '../../platform/services.ts';
import { actorOf } from '../access.ts';
import { sessionOf } from '../session/authenticate.ts';
import { errorResponses, userSchema, uuidParam } from './schemas.ts';
import { userView } from './views.ts';

const tags = ['service admins'];
const userParams = { type: 'object', required: ['userId'], properties: { userId: uuidParam } } as const;
const passwordField = { type: 'string', maxLength: 1024, description: 'at least 12 characters; omit to have one generated and shown once' } as const;

export async function registerServiceAdminRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  function requireServiceAdmin(request: FastifyRequest): void {
    if (sessionOf(request).user.role !== 'service-admin') throw new HttpProblem(403, 'forbidden', 'only a service admin manages service admins');
  }

  async function serviceAdmin(userId: string) {
    const user = await findUserById(database, userId);
    if (!user || user.role !== 'service-admin') throw new HttpProblem(404, 'not-found', 'no such service admin');
    return user;
  }

  app.get(
    '/api/service-admins',
    { schema: { summary: 'The service admins', tags, response: { 200: { type: 'object', properties: { users: { type: 'array', items: userSchema } } }, ...errorResponses } } },
    async (request) => {
      requireServiceAdmin(request);
      return { users: (await listUsers(database)).filter((user) => user.role === 'service-admin').map(userView) };
    },
  );

  app.post(
    '/api/service-admins',
    {
      schema: {
        summary: 'Add a service admin',
        tags,
        body: { type: 'object', required: ['email'], additionalProperties: false, properties: { email: { type: 'string', maxLength: 320 }, password: passwordField } },
        response: { 201: { type: 'object', properties: { user: userSchema, generated_password: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Body: { email: string; password?: string } }>, reply) => {
      requireServiceAdmin(request);
      const { email, password } = request.body;
      const created = await database.transaction((tx) => createUser(tx, { siteId: null, email, role: 'service-admin', ...(password ? { password } : {}) }, actorOf(request)));
      return reply.code(201).send({ user: userView(created.user), ...(created.generatedPassword ? { generated_password: created.generatedPassword } : {}) });
    },
  );

  app.patch(
    '/api/service-admins/:userId',
    {
      schema: {
        summary: 'Deactivate or reactivate a service admin',
        tags,
        params: userParams,
        body: { type: 'object', required: ['active'], additionalProperties: false, properties: { active: { type: 'boolean' } } },
        response: { 200: userSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { userId: string }; Body: { active: boolean } }>) => {
      requireServiceAdmin(request);
      const target = await serviceAdmin(request.params.userId);
      if (target.id === sessionOf(request).user.id && !request.body.active) {
        throw new DomainError('business-rule', 'you cannot deactivate yourself; ask another service admin', [{ message: 'you cannot deactivate yourself', location: 'active' }]);
      }
      return userView(await database.transaction((tx) => updateUser(tx, target.id, { active: request.body.active }, actorOf(request))));
    },
  );

  app.post(
    '/api/service-admins/:userId/password',
    {
      schema: {
        summary: 'Reset a service admin\'s password',
        description: 'Sets the given password, or generates one and returns it once. Their sessions end.',
        tags,
        params: userParams,
        body: { type: 'object', additionalProperties: false, properties: { password: passwordField } },
        response: { 200: { type: 'object', properties: { generated_password: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { userId: string }; Body: { password?: string } }>) => {
      requireServiceAdmin(request);
      const target = await serviceAdmin(request.params.userId);
      const session = sessionOf(request);
      const { generatedPassword } = await database.transaction((tx) =>
        resetPassword(tx, target.id, request.body.password, actorOf(request), target.id === session.user.id ? { keepSessionHash: session.idHash } : {}),
      );
      return generatedPassword ? { generated_password: generatedPassword } : {};
    },
  );
}
