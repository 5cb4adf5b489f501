package io.warpdata.daemon.cli;

import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import io.warpdata.daemon.inspect.TextTable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/** {@code warpctl list-remote [WS/]}: workspaces, or the datasets of one workspace. */
@Command(name = "list-remote", description = "Workspaces in the store, or datasets of WS/ with their latest version.")
final class ListRemoteCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", arity = "0..1", paramLabel = "WS/", description = "A workspace (default: list workspaces).")
    String workspace;

    @Override
    public Integer call() {
        try (Remote remote = root.openRemote()) {
            if (workspace == null) {
                List<String> ws = remote.catalog().workspaces();
                if (root.json) {
                    root.printJson(Map.of("workspaces", ws));
                } else {
                    ws.forEach(w -> root.context.out().println(w + "/"));
                }
                return 0;
            }
            String ws = workspace.endsWith("/") ? workspace.substring(0, workspace.length() - 1) : workspace;
            if (!ws.matches("^[a-z0-9_-]+$")) {
                throw new UsageException("'" + workspace + "' is not a workspace",
                        "Name a workspace like 'vision/' (lowercase letters, digits, '_', '-').");
            }
            List<Object> json = new ArrayList<>();
            TextTable text = new TextTable(List.of("DATASET", "LATEST", "VERSIONS"));
            for (DatasetId id : remote.catalog().datasets(ws)) {
                Optional<VersionHash> latest = remote.catalog().latest(id);
                int versions = remote.catalog().versions(id).size();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("dataset", id.toString());
                m.put("latest", latest.map(VersionHash::hex).orElse(null));
                m.put("versions", versions);
                json.add(m);
                text.add(List.of(id.toString(), latest.map(v -> v.shortHex(12)).orElse("-"), Integer.toString(versions)));
            }
            if (root.json) {
                root.printJson(Map.of("workspace", ws, "datasets", json));
            } else {
                root.context.out().print(text.render(true));
            }
        }
        return 0;
    }
}
