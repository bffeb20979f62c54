/** The List entity. */
import type { ListRow } from "../services/lists";

export const renderList = (l: ListRow) => ({ id: l.id, title: l.title });
