builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
