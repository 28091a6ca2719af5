// The append-only audit trail, written by the database's triggers.
// The types the domain sees and what it asks of this aggregate; sqlite.ts and
// postgres.ts beside this file answer it. Times are Unix milliseconds.

/** One row of the append-only audit trail; written by the database itself. */
export interface AuditEntry {
  seq: number;
  at: number;
  keyId: string;
  /** group.member_added / group.member_removed (issue 34): one per commitment; their session, agent and action are "". */
  event: "challenge.created" | "verification.decided" | "group.member_added" | "group.member_removed";
  sessionId: string;
  agentId: string;
  action: string;
  /** pending (created), verified or failed; added or removed for a membership change. */
  result: string;
  reason: string | null;
  requestId: string | null;
  /** A membership change's group and commitment; null for the other events. */
  groupId: string | null;
  commitment: string | null;
}

export interface AuditQuery {
  /** Entries with seq greater than this (for paging and tailing). */
  afterSeq?: number;
  keyId?: string;
  limit: number;
}

export interface AuditStore {
  listAudit(query: AuditQuery): Promise<AuditEntry[]>;

  /**
   * Deletes audit entries older than `before`; returns how many. The only way
   * rows leave the append-only table: the database refuses every other DELETE.
   */
  purgeAudit(before: number): Promise<number>;
}
