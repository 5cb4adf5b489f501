package io.warpdata.daemon.control;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** The operations a control server offers, by name. */
public final class OperationRegistry {
    private final Map<String, Operation> byName = new TreeMap<>();

    public OperationRegistry(Collection<? extends Operation> operations) {
        for (Operation op : operations) {
            if (byName.putIfAbsent(op.name(), op) != null) {
                throw new IllegalArgumentException("two operations named " + op.name());
            }
        }
    }

    public Optional<Operation> find(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    public Collection<String> names() {
        return byName.keySet();
    }
}
