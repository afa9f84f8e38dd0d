/* SPDX-License-Identifier: Apache-2.0 */

import fxagent.Oracle;
import java.util.function.IntUnaryOperator;

/** Defined again and again as a hidden class by HiddenClassTest, from this class file. */
public class HiddenTarget implements IntUnaryOperator {
    @Override
    public int applyAsInt(int k) {
        Oracle.check();
        return inner(k) + 1;
    }

    private static int inner(int k) {
        Oracle.check();
        return k;
    }
}
