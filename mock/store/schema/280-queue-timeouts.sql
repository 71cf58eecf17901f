-- Queue timeouts (TIME-001) without a timer row per execution. Every acceptance wrote one (2 b-trees: the table
-- and the subject index); a busy Project's waiting executions time out in the order they were accepted, so
-- one pending timer per Project, for its earliest queue deadline, is enough: it is re-armed for the next
-- deadline when it fires (mock/execution/queue-timeouts.ts). An execution keeps its own deadline and the
-- timer seq it took at acceptance, and the re-armed timer takes that key, so timers fire in the order a
-- timer per execution fired in.
ALTER TABLE executions ADD COLUMN queue_due_at INTEGER;
ALTER TABLE executions ADD COLUMN queue_timer_seq INTEGER;

-- A kept store's pending queue timeouts: their executions take their keys, and the timers become the
-- Project's (subject queue:<project>, the Project in the payload).
UPDATE executions SET (queue_due_at, queue_timer_seq) = (
    SELECT t.due_at, t.seq FROM timers t
    WHERE t.subject = executions.id AND t.kind = 'execution.queue-timeout'
    ORDER BY t.due_at, t.seq LIMIT 1)
  WHERE terminal = 0;
UPDATE timers SET
    subject = 'queue:' || (SELECT e.project_id FROM executions e WHERE e.id = timers.subject),
    payload_json = json_object('id', timers.subject,
      'project_id', (SELECT e.project_id FROM executions e WHERE e.id = timers.subject))
  WHERE kind = 'execution.queue-timeout' AND subject IN (SELECT id FROM executions);
