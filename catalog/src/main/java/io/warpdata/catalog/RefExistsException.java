package io.warpdata.catalog;

import io.warpdata.store.StoreException;

/**
 * A tag or branch cannot be made as asked: the tag already names another version (tags never
 * move), or the name is taken by a ref of the other kind (tags and branches share one
 * namespace per dataset).
 */
public final class RefExistsException extends StoreException {
    public RefExistsException(String message, String nextStep) {
        super(message, nextStep, null);
    }

    @Override
    public String type() {
        return "RefExists";
    }
}
