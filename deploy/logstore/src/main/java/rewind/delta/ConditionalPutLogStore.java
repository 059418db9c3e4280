package rewind.delta;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.util.Arrays;
import java.util.Iterator;

import io.delta.storage.S3SingleDriverLogStore;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSDataOutputStreamBuilder;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options.CreateFileOptionKeys;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.AWSServiceIOException;
import org.apache.hadoop.fs.s3a.RemoteFileChangedException;

/**
 * A {@link io.delta.storage.LogStore} for S3 (and the stores that speak its API) through
 * Hadoop's s3a that commits by conditional create, so that writers in any number of JVMs, and
 * other engines committing with {@code If-None-Match} (delta-rs), never lose a commit
 * (Rewind's SPEC R46; delta-io/delta#3596 asks for the same in Delta).
 * <p>
 * Guarantees, on a store that honours {@code If-None-Match: *} on PUT (AWS S3 since 2024,
 * SeaweedFS, MinIO, R2, ...):
 * <ul>
 *   <li>Mutual exclusion: a commit ({@code overwrite = false}) is one PUT with
 *       {@code If-None-Match: *} (s3a's {@code fs.option.create.conditional.overwrite}, Hadoop
 *       3.4.2+). The store lets exactly one writer create a version; every other gets
 *       {@link FileAlreadyExistsException}, which Delta answers by checking for conflicts and
 *       retrying at the next version. No existence probe comes first: the store decides.</li>
 *   <li>AWS's 409 (a conditional PUT meeting another write of the key in flight) is
 *       retried, a few times, as AWS asks.</li>
 *   <li>A retried PUT whose first attempt landed (a time-out after the store wrote) is answered
 *       412 too; the object is then read back, and the commit is ours when its bytes are ours
 *       (a Delta commit carries its transaction's id), so no commit is written twice.</li>
 *   <li>Atomic visibility: the object appears whole at close or not at all
 *       ({@code isPartialWriteVisible} is false, inherited).</li>
 *   <li>Consistent listing: S3 lists strongly after a write; {@code listFrom} is
 *       {@link S3SingleDriverLogStore}'s, a listing of the log directory. (Its faster variant,
 *       {@code delta.enableFastS3AListFrom}, calls an s3a method that hadoop-aws 3.5.0 no
 *       longer has.)</li>
 * </ul>
 * {@code overwrite = true} (Delta's {@code _last_checkpoint}) stays a plain PUT. On a store
 * without conditional writes the commit fails (the store's 501 or s3a's "Conditional Writes
 * Unavailable") instead of silently overwriting.
 */
public class ConditionalPutLogStore extends S3SingleDriverLogStore {

    private static final int CONFLICT = 409;
    private static final int CONFLICT_ATTEMPTS = 5;

    public ConditionalPutLogStore(Configuration hadoopConf) {
        super(hadoopConf);
    }

    @Override
    public void write(
            Path path,
            Iterator<String> actions,
            Boolean overwrite,
            Configuration hadoopConf) throws IOException {
        if (overwrite) {
            super.write(path, actions, true, hadoopConf);
            return;
        }
        final FileSystem fs = path.getFileSystem(hadoopConf);
        final byte[] commit = serialize(actions);
        for (int attempt = 1; ; attempt++) {
            try {
                create(fs, path, commit);
                return;
            } catch (RemoteFileChangedException
                     | org.apache.hadoop.fs.FileAlreadyExistsException e) {
                if (holds(fs, path, commit)) {
                    return;
                }
                throw new FileAlreadyExistsException(path.toString());
            } catch (AWSServiceIOException e) {
                // AWS answers 409 (ConditionalRequestConflict) to a conditional PUT that meets
                // another write of the same key in flight, and asks for a retry: the retry
                // then sees the winner (412) or wins.
                if (e.statusCode() != CONFLICT || attempt >= CONFLICT_ATTEMPTS) {
                    throw e;
                }
                pause(attempt);
            }
        }
    }

    /** One PUT of {@code commit} with {@code If-None-Match: *}, at close. */
    private static void create(FileSystem fs, Path path, byte[] commit) throws IOException {
        final FSDataOutputStreamBuilder<?, ?> create = fs.createFile(path);
        create.overwrite(false)
            .must(CreateFileOptionKeys.FS_OPTION_CREATE_CONDITIONAL_OVERWRITE, true);
        try (FSDataOutputStream out = create.build()) {
            out.write(commit);
        }
    }

    private static void pause(int attempt) throws InterruptedIOException {
        try {
            Thread.sleep(50L * attempt);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted between commit attempts");
        }
    }

    private static byte[] serialize(Iterator<String> actions) throws IOException {
        final java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        while (actions.hasNext()) {
            bytes.write((actions.next() + "\n").getBytes(StandardCharsets.UTF_8));
        }
        return bytes.toByteArray();
    }

    /** Whether the object at {@code path} is {@code commit}, byte for byte. */
    private static boolean holds(FileSystem fs, Path path, byte[] commit) throws IOException {
        try (InputStream in = fs.open(path)) {
            return Arrays.equals(in.readNBytes(commit.length + 1), commit);
        }
    }
}
