import { GridFSBucket, ObjectId, type Db } from 'mongodb';

/**
 * The bytes a capture keeps (PNG, DOM, page report, diff images) in GridFS, beside the projections
 * that name them: any process of the deployment can serve them, and they survive a restart. Ids
 * travel in events as hex strings.
 */
export class BlobStore {
  readonly #bucket: GridFSBucket;

  constructor(db: Db, bucketName = 'vision_blobs') {
    this.#bucket = new GridFSBucket(db, { bucketName, chunkSizeBytes: 255 * 1024 });
  }

  async put(bytes: Buffer, meta: { customerId: string; kind: 'png' | 'dom' | 'report' | 'diff'; contentType: string }): Promise<string> {
    const upload = this.#bucket.openUploadStream(`${meta.kind}`, { metadata: { customerId: meta.customerId, kind: meta.kind, contentType: meta.contentType } });
    await new Promise<void>((resolve, reject) => {
      upload.once('finish', () => resolve());
      upload.once('error', reject);
      upload.end(bytes);
    });
    return upload.id.toHexString();
  }

  /** The blob if it is this customer's (stored for them), else null: another's blob is no blob. */
  async getOwned(id: string, customerId: string, kind: 'png' | 'dom' | 'report' | 'diff'): Promise<Buffer | null> {
    if (!/^[0-9a-f]{24}$/i.test(id)) return null;
    const file = await this.#bucket.find({ _id: new ObjectId(id) }).limit(1).next();
    const meta = file?.metadata as { customerId?: unknown; kind?: unknown } | undefined;
    if (meta?.customerId !== customerId || meta.kind !== kind) return null;
    return this.get(id);
  }

  /** The blob's bytes, or null when there is no such blob (a malformed id is no such blob). */
  async get(id: string): Promise<Buffer | null> {
    if (!ObjectId.isValid(id) || !/^[0-9a-f]{24}$/i.test(id)) return null;
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of this.#bucket.openDownloadStream(new ObjectId(id))) chunks.push(chunk as Buffer);
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT' || /FileNotFound|not found/i.test((err as Error).message)) return null;
      throw err;
    }
    return Buffer.concat(chunks);
  }
}
