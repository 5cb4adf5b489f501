/**
 * The mount's file tree as plain Java, and (in {@code fuse}) the FUSE server that serves it. A map
 * of the package; docs/DESIGN.md section 5 tells the layout a user sees.
 *
 * <h2>The tree</h2>
 * <ul>
 * <li>{@link io.warpdata.vfs.WarpTree}: the entry: lookups, attributes, listings, reads.</li>
 * <li>{@link io.warpdata.vfs.Node}: one entry of the tree, a sealed family of immutable records;
 *     every switch over it is exhaustive. {@code TreeLookups} resolves a child by (parent node,
 *     name), {@code DirectoryListing} lists with resumable offsets, {@link io.warpdata.vfs.FileContent}
 *     says where a file's bytes are.</li>
 * <li>{@link io.warpdata.vfs.VersionTree}: a version's parsed facts, shared by its nodes;
 *     {@code MemberIndexCache} and {@code IndexPages}: artifacts' member indexes, read in place
 *     from files in the cache directory through a page cache of fixed size.</li>
 * </ul>
 *
 * <h2>How inodes are numbered, and why</h2>
 * The kernel names every node it holds by a 64-bit id. There are two kinds:
 * <ul>
 * <li><b>Member files are computed</b> ({@code MemberInodes}): bit 63 set, bit 62 clear, the
 *     artifact's slot in bits 31-61 and the member's position in its index in bits 0-30. A slot
 *     ({@link io.warpdata.vfs.ArtifactSlot}) is given to each (version, artifact) the first time a
 *     lookup or listing reaches its folder, in order, and never reused while the tree lives; a
 *     version and its index never change. So an id names one member for the life of the mount,
 *     and a LOOKUP, a READDIRPLUS entry or a FORGET of a member costs no state at all: GETATTR
 *     and READ decode the id and read the member's entry from the index. Why: {@code find} over
 *     ImageNet's 1.28M members makes the kernel hold 1.28M inodes at once; a table entry per
 *     inode cost ~290 bytes and two map writes each (370 MiB of heap), and FORGET two more map
 *     operations. Limits: 2^31 slots per mount ({@link io.warpdata.vfs.TooManyArtifactsException}
 *     past them) and 2^31 - 1 members per index (an index's own bound). A number never handed
 *     out decodes as {@link io.warpdata.vfs.StaleNodeException} (ESTALE), never as another
 *     member. A READDIRPLUS entry of a member hands the kernel this id only while members of its
 *     artifact are being looked up ({@code fuse.AttributeDemand}); otherwise the dirent carries
 *     the same number as its inode number and the kernel builds no inode for it.</li>
 * <li><b>Tensor files are computed too</b> ({@code TensorInodes}): bits 63 and 62 set, the slot
 *     of their {@code F.tensors/} folder (one per safetensors file the mount reaches) in bits
 *     31-61, and the file's position in its folder (files sorted by path, from the header alone)
 *     in bits 0-30. GETATTR and READ find the file in its folder, kept by {@code TensorFolders}
 *     or made again from its header. Why: tabled, each listed tensor cost ~330 bytes of entry and
 *     node while the kernel held it, outside the folders' heap budget (audit 39: 600,000 of them,
 *     about 200 MB, after six folders of 100,000 tensors were listed).</li>
 * <li><b>Everything else is tabled</b> ({@code fuse.NodeTable}): the root, workspaces, links,
 *     versions, directories, table shards and the manifest get ids counted up from
 *     2 (never near 2^63), one per name the kernel holds, dropped when the kernel forgets it.
 *     These need state (a link's target moves, a directory's listing is resumed by its node),
 *     and there are few of them: ImageNet has 1,000 folders for its 1.28M files.</li>
 * </ul>
 *
 * <h2>Errors</h2>
 * Exceptions name the object and the next step; {@link io.warpdata.vfs.Errno} is the one place
 * that turns them into errnos, logs and counts them.
 */
package io.warpdata.vfs;
