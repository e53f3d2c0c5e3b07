# SPDX-License-Identifier: GPL-2.0-only
"""python3 tests/pushd.py DIR PORTFILE

A Pyroscope-compatible ingest endpoint for tests/cli/pprof.sh: takes
POST /ingest?name=...&from=...&until=...&format=pprof with the profile as the
multipart field "profile", saves it as DIR/N.pb.gz and the query string as
DIR/N.query and the request's headers as DIR/N.headers, and answers 200 (400 for anything else).  Listens on a free
port of 127.0.0.1 and writes it to PORTFILE."""
import email.parser
import email.policy
import http.server
import os
import sys
import urllib.parse

DIR, PORTFILE = sys.argv[1], sys.argv[2]


class Ingest(http.server.BaseHTTPRequestHandler):
    count = 0

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        head = f"Content-Type: {self.headers.get('Content-Type', '')}\r\n\r\n".encode()
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
        profile = None
        if msg.is_multipart():
            for part in msg.iter_parts():
                if part.get_param("name", header="content-disposition") == "profile":
                    profile = part.get_payload(decode=True)
        if url.path != "/ingest" or not profile:
            self.send_response(400)
            self.end_headers()
            return
        Ingest.count += 1
        with open(os.path.join(DIR, f"{Ingest.count}.pb.gz"), "wb") as f:
            f.write(profile)
        with open(os.path.join(DIR, f"{Ingest.count}.query"), "w") as f:
            f.write(urllib.parse.unquote(url.query) + "\n")
        with open(os.path.join(DIR, f"{Ingest.count}.headers"), "w") as f:
            f.write("".join(f"{k}: {v}\n" for k, v in self.headers.items()))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Ingest)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(f"{server.server_port}\n")
os.rename(PORTFILE + ".tmp", PORTFILE)
server.serve_forever()
