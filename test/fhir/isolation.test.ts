import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useFhirOrigin, fhirClient, patientBody } from './fhir-test-origin.ts';

const fhirOrigin = useFhirOrigin();

test('another site\'s ids answer exactly like ids that do not exist, for every interaction', async () => {
  const owner = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const stranger = await fhirClient(fhirOrigin.app, fhirOrigin.db.database, { patientPutCreates: true });
  const patient = (await owner.request('POST', '/fhir/Patient', { body: patientBody('I-1', { gender: 'female' }) })).json();
  const observation = (
    await owner.request('POST', '/fhir/Observation', {
      body: { resourceType: 'Observation', status: 'final', code: { text: 'Hb' }, subject: { reference: `Patient/${patient.id}` } },
    })
  ).json();
  const missing = '00000000-0000-4000-8000-000000000000';

  for (const [type, id] of [['Patient', patient.id], ['Observation', observation.id]] as const) {
    const paths = [`/fhir/${type}/${id}`, `/fhir/${type}/${id}/_history`, `/fhir/${type}/${id}/_history/1`];
    for (const path of paths) {
      const foreign = await stranger.request('GET', path);
      const absent = await stranger.request('GET', path.replace(id, missing));
      assert.equal(foreign.statusCode, 404, path);
      assert.equal(absent.statusCode, 404, path);
      // Same outcome apart from the id itself.
      assert.equal(foreign.body.replace(id, 'ID'), absent.body.replace(missing, 'ID'), path);
    }
  }

  // Update of a foreign id: 405 as for an id that does not exist, never a new version in the
  // other site, never an upsert.
  const { id: _id, ...withoutId } = patient;
  assert.equal((await stranger.request('PUT', `/fhir/Patient/${patient.id}`, { body: { ...patient, gender: 'male' } })).statusCode, 405);
  const upsert = await stranger.request('PUT', `/fhir/Patient/${patient.id}`, { body: withoutId });
  assert.equal(upsert.statusCode, 201);
  assert.notEqual(upsert.json().id, patient.id);
  const unchanged = (await owner.request('GET', `/fhir/Patient/${patient.id}`)).json();
  assert.equal(unchanged.meta.versionId, '1');
  assert.equal(unchanged.gender, 'female');

  // Search never returns the other site's rows, whatever the criteria.
  for (const query of [`Patient?_id=${patient.id}`, 'Patient?identifier=I-1&gender=female', `Observation?patient=${patient.id}`, `Observation?_id=${observation.id}`, 'Observation']) {
    const bundle = (await stranger.request('GET', `/fhir/${query}`)).json();
    const ids = (bundle.entry ?? []).map((entry: { resource: { id: string } }) => entry.resource.id);
    assert.ok(!ids.includes(patient.id) && !ids.includes(observation.id), query);
  }

  // A reference to another site's patient is refused like a reference to nobody.
  const foreignReference = await stranger.request('POST', '/fhir/Observation', {
    body: { resourceType: 'Observation', status: 'final', code: { text: 'x' }, subject: { reference: `Patient/${patient.id}` } },
  });
  const nobodyReference = await stranger.request('POST', '/fhir/Observation', {
    body: { resourceType: 'Observation', status: 'final', code: { text: 'x' }, subject: { reference: `Patient/${missing}` } },
  });
  assert.equal(foreignReference.statusCode, 422);
  assert.equal(foreignReference.body.replace(patient.id, 'ID'), nobodyReference.body.replace(missing, 'ID'));

  // Conditional create looks only at the caller's site: the other site's match does not count.
  const third = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const conditional = await third.request('POST', '/fhir/Patient', {
    body: patientBody('I-1'),
    headers: { 'if-none-exist': 'identifier=urn:mrn|I-1' },
  });
  assert.equal(conditional.statusCode, 201);
  assert.notEqual(conditional.json().id, patient.id);

  // History of the owner holds only its own versions.
  const history = (await owner.request('GET', `/fhir/Patient/${patient.id}/_history`)).json();
  assert.equal(history.total, 1);
});
