// SPDX-License-Identifier: Apache-2.0
// The C++ half of libfxtest_symlib.so: a member function and a template instance whose mangled
// names unit.elfsym expects demangled. Built by tests/unit/symlib/CMakeLists.txt.
namespace fxtest {
struct Burner {
    static int spin(int n);
};

int Burner::spin(int n)
{
    volatile int acc = 0;
    for (int i = 0; i < n; i++)
        acc += i * 7;
    return acc;
}

template <typename T> T twice(T x)
{
    volatile T y = x;
    return y + y;
}
template long twice<long>(long);
} // namespace fxtest
