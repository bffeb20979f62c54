/** What a local nickname may be: registration checks it, the instance entity reports the reserved names. */
/** Names that would collide with routes or mislead, as Pleroma reserves them. */
export const RESERVED_NICKNAMES = (
  ".well-known ~ about activities api auth check_password dev friend-requests inbox internal main media nodeinfo " +
  "notice oauth objects ostatus_subscribe pleroma proxy push registration relay settings status tag user-search " +
  "user_exists users web verify_credentials update_credentials relationships search confirmation_resend mfa " +
  "admin administrator root starling instance images static"
).split(" ");

export const NICKNAME_PATTERN = /^[a-zA-Z0-9_]{1,30}$/;
