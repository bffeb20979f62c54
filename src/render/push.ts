/** The PushSubscription entity. */
import type { SubscriptionRow } from "../services/push";
import { alertsFrom } from "../lib/push-alerts";

export const renderPushSubscription = (s: SubscriptionRow, serverKey: string) => ({
  id: s.id,
  endpoint: s.endpoint,
  alerts: alertsFrom(s.alerts),
  server_key: serverKey,
});
