/** The PushSubscription entity. */
import { alertsFrom, type SubscriptionRow } from "../services/push";

export const renderPushSubscription = (s: SubscriptionRow, serverKey: string) => ({
  id: s.id,
  endpoint: s.endpoint,
  alerts: alertsFrom(s.alerts),
  server_key: serverKey,
});
