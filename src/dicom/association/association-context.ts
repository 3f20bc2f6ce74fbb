import type { TrafficCounter } from '../../domain/activity/traffic-counter.ts';
import type { InstanceStoreContext } from '../../domain/imaging/instance-store.ts';
import type { GatewayMetrics } from '../../platform/metrics/gateway-metrics.ts';

/**
 * What a DIMSE service handler knows about the association it serves: the site the called AE
 * title selected (its actor records the calling AE and remote IP), and what storing needs.
 */
export type AssociationContext = InstanceStoreContext & { metrics?: GatewayMetrics; traffic?: TrafficCounter };
