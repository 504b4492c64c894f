"""tmmtools: tmm-bridge's Python tooling as one package (tmmtools/README.md has the layout).

Every tool is a module run from the repository root with Debian's interpreter, whose
python3-websockets, python3-cryptography, python3-gps and python3-selenium it needs:

    /usr/bin/python3 -m tmmtools.<subpackage>.<module> [options]

A tool that starts another builds the command with tmmtools.checkout.module_command; every wait
for a condition goes through tmmtools.polling.wait_until.
"""
