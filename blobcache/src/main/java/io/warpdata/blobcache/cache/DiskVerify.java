package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlockHashList;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/** {@code warpctl cache verify} over the blocks on disk ({@link DiskBlocks#verify}). */
final class DiskVerify {
    private DiskVerify() {
    }

    /**
     * Re-hashes {@code entries} (blocks against their list's SHA-256, members against their own
     * id) and has {@code drop} remove each that does not match, and {@code forget} each whose
     * file is gone (deleted by something else: no damage; audit 31 saw a deleted cache reported
     * as 19 corrupt blocks).
     *
     * @param stop polled before each block
     */
    static VerifyResult run(List<Map.Entry<BlockKey, DiskEntry>> entries, CacheDirectory dir, HashLists lists,
                            LongConsumer progress, BooleanSupplier stop, BiConsumer<BlockKey, DiskEntry> drop,
                            BiConsumer<BlockKey, DiskEntry> forget) {
        long checked = 0;
        long checkedBytes = 0;
        boolean stopped = false;
        long removed = 0;
        long removedBytes = 0;
        long withoutList = 0;
        long missing = 0;
        Map<BlobId, BlockHashList> listCache = new HashMap<>();
        byte[] buf = new byte[0];
        for (Map.Entry<BlockKey, DiskEntry> me : entries) {
            if (stop.getAsBoolean()) {
                stopped = true;
                break;
            }
            BlockKey key = me.getKey();
            DiskEntry e = me.getValue();
            if (buf.length < e.length) {
                buf = new byte[e.length];
            }
            boolean ok;
            try (FileChannel ch = FileChannel.open(dir.path(key), StandardOpenOption.READ)) {
                ok = BlockFile.readFully(ch, ByteBuffer.wrap(buf, 0, e.length), e.headerLength)
                        && ch.size() == (long) e.headerLength + e.length;
            } catch (java.nio.file.NoSuchFileException gone) {
                missing++;
                forget.accept(key, e);
                progress.accept(checkedBytes);
                continue;
            } catch (IOException ex) {
                ok = false;
            }
            if (ok) {
                ok = java.util.Arrays.equals(BlockFile.chunkCrcs(buf, 0, e.length), e.crcs);
            }
            if (ok && e.member) {
                // A member cached under its hash: the whole blob, verified by its own id.
                MessageDigest md = BlobId.sha256();
                md.update(buf, 0, e.length);
                ok = key.index() == 0 && BlobId.fromDigest(md.digest()).equals(key.blob());
            } else if (ok) {
                BlockHashList list = listCache.computeIfAbsent(e.listId, lists::readFromDisk);
                if (list == null || list.blockSize() != key.blockSize() || key.index() >= list.blockCount()) {
                    withoutList++;
                } else {
                    ok = list.blockLength(key.index()) == e.length && list.verify(key.index(), buf, 0, e.length);
                }
            }
            checked++;
            checkedBytes += e.length;
            if (!ok) {
                removed++;
                removedBytes += e.weight();
                drop.accept(key, e);
            }
            progress.accept(checkedBytes);
        }
        return new VerifyResult(checked, checkedBytes, removed, removedBytes, withoutList, stopped, missing);
    }
}
