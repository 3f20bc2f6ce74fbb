import type { Site } from './sites.ts';

/** A site as the operator sees it, in the admin API's and the CLI's JSON (snake_case). */
export function siteJson(site: Site) {
  return {
    id: site.id,
    name: site.name,
    ae_title: site.aeTitle,
    patient_put_creates: site.policies.patientPutCreates,
    mllp_allow_any_ip: site.policies.mllpAllowAnyIp,
    time_zone: site.timeZone,
    data_access_retention_days: site.dataAccessRetentionDays,
    message_body_retention_days: site.messageBodyRetentionDays,
    export_retention_hours: site.exportRetentionHours,
    refused_traffic_retention_days: site.refusedTrafficRetentionDays,
    offboarding_marked_at: site.offboarding?.markedAt ?? null,
    purge_after: site.offboarding?.purgeAfter ?? null,
    created_at: site.createdAt,
    updated_at: site.updatedAt,
  };
}
