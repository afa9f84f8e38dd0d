/* SPDX-License-Identifier: Apache-2.0 */
package fxtest;

import java.io.IOException;
import java.io.InputStream;
import java.util.Set;

/**
 * Defines the named classes itself, from the class files its parent can see, and delegates the
 * rest: each instance gives fresh copies of those classes (their own static initializers, their
 * own jmethodIDs) that die with the loader.
 */
public final class IsolatingLoader extends ClassLoader {
    private final Set<String> own;

    public IsolatingLoader(ClassLoader parent, Set<String> own) {
        super(parent);
        this.own = own;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!own.contains(name)) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            if (c == null) {
                byte[] b = bytesOf(getParent(), name);
                c = defineClass(name, b, 0, b.length);
            }
            if (resolve) {
                resolveClass(c);
            }
            return c;
        }
    }

    /** The class file of {@code name} as {@code loader} sees it. */
    public static byte[] bytesOf(ClassLoader loader, String name) throws ClassNotFoundException {
        try (InputStream in = loader.getResourceAsStream(name.replace('.', '/') + ".class")) {
            if (in == null) {
                throw new ClassNotFoundException(name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new ClassNotFoundException(name, e);
        }
    }
}
