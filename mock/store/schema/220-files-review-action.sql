-- Approval handling rule 4 (ACT-021): a review file of an approval action is an artifact of the Run that only
-- a key with artifacts:read and the action's approval permission (actions:approve) reads. NULL: any artifact.
ALTER TABLE files ADD COLUMN review_action_id TEXT;
