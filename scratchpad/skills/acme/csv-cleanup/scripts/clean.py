import csv
import sys

writer = csv.writer(sys.stdout)
for row in csv.reader(open(sys.argv[1], newline="")):
    cells = [cell.strip() for cell in row]
    if any(cells):
        writer.writerow(cells)
