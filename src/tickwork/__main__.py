from tickwork.cli import main

main(prog_name="tickwork")
