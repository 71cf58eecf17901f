/** The public shapes of a stored file: FileReceipt (upload answer) and ArtifactDetail (Files). */
import type { components } from '../../spec/index.js'
import type { StoredFile } from '../store/files.js'
import { iso } from '../util/iso.js'

/** The FileReceipt of a stored input file (FILE-001). */
export const fileReceipt = (f: StoredFile): components['schemas']['FileReceipt'] => ({
  file_id: f.id,
  status: f.status,
  filename: f.filename,
  mime_type: f.mime_type,
  size_bytes: f.size_bytes,
  sha256: f.sha256,
  expires_at: iso(f.expires_at),
})

/** The ArtifactDetail of a stored artifact (FILE-003). */
export const artifactDetail = (a: StoredFile): components['schemas']['ArtifactDetail'] => ({
  id: a.artifact_id!,
  file_id: a.id,
  status: a.status,
  filename: a.filename,
  mime_type: a.mime_type,
  size_bytes: a.size_bytes,
  sha256: a.sha256,
  expires_at: iso(a.expires_at),
})
