// The matcore program: the commands of cli/commands.cpp.
int matcore_main(int argc, char** argv);

int main(int argc, char** argv) { return matcore_main(argc, argv); }
