/**
 * Street vocabulary of airgap-scrub's address detector (addresses.ts):
 *  - SUFFIXES: street types that end an English-language street name: USPS
 *    Publication 28 appendix C1 (primary names, their plurals and standard
 *    abbreviations), plus the Royal Mail / Australia Post / Canada Post types
 *    that list does not have (Close, Crescent, Mews, Parade, Esplanade, ...);
 *  - GERMAN_SUFFIXES: the endings of German street names (Straße, Weg,
 *    Allee, Platz, Gasse, ...), written into the name ("Hauptstraße 5");
 *  - UNIT_WORDS: secondary unit designators (USPS C2 and the UK/AU ones) that
 *    may lead a street line ("Flat 3, 12 High Street", "Unit 4/12 ...").
 */

const C1 = `Alley Allee Aly Anex Annex Anx Arcade Arc Avenue Ave Av Bayou Byu Beach Bch Bend Bnd Bluff Blf Bluffs Blfs Bottom Btm
Boulevard Blvd Branch Br Bridge Brg Brook Brk Brooks Brks Burg Bg Burgs Bgs Bypass Byp Camp Cp Canyon Cyn Cape Cpe Causeway Cswy
Center Centre Ctr Centers Ctrs Circle Cir Circles Cirs Cliff Clf Cliffs Clfs Club Clb Common Cmn Commons Cmns Corner Cor Corners Cors
Course Crse Court Ct Courts Cts Cove Cv Coves Cvs Creek Crk Crescent Cres Crest Crst Crossing Xing Crossroad Xrd Crossroads Xrds Curve Curv
Dale Dl Dam Dm Divide Dv Drive Dr Drives Drs Estate Est Estates Ests Expressway Expy Extension Ext Extensions Exts Fall Falls Fls
Ferry Fry Field Fld Fields Flds Flat Flt Flats Flts Ford Frd Fords Frds Forest Frst Forge Frg Forges Frgs Fork Frk Forks Frks Fort Ft
Freeway Fwy Garden Gdn Gardens Gdns Gateway Gtwy Glen Gln Glens Glns Green Grn Greens Grns Grove Grv Groves Grvs Harbor Harbour Hbr
Harbors Hbrs Haven Hvn Heights Hts Highway Hwy Hill Hl Hills Hls Hollow Holw Inlet Inlt Island Is Islands Iss Isle Junction Jct
Junctions Jcts Key Ky Keys Kys Knoll Knl Knolls Knls Lake Lk Lakes Lks Land Landing Lndg Lane Ln Light Lgt Lights Lgts Loaf Lf Lock Lck
Locks Lcks Lodge Ldg Loop Mall Manor Mnr Manors Mnrs Meadow Mdw Meadows Mdws Mews Mill Ml Mills Mls Mission Msn Motorway Mtwy Mount Mt
Mountain Mtn Mountains Mtns Neck Nck Orchard Orch Oval Overpass Opas Park Prk Parks Parkway Pkwy Parkways Pkwys Pass Passage Psge
Path Pike Pine Pne Pines Pnes Place Pl Plain Pln Plains Plns Plaza Plz Point Pt Points Pts Port Prt Ports Prts Prairie Pr Radial Radl
Ramp Ranch Rnch Rapid Rpd Rapids Rpds Rest Rst Ridge Rdg Ridges Rdgs River Riv Road Rd Roads Rds Route Rte Row Rue Run Shoal Shl
Shoals Shls Shore Shr Shores Shrs Skyway Skwy Spring Spg Springs Spgs Spur Spurs Square Sq Squares Sqs Station Sta Stravenue Stra
Stream Strm Street St Streets Sts Summit Smt Terrace Ter Throughway Trwy Trace Trce Track Trak Trafficway Trfy Trail Trl Trailer Trlr
Tunnel Tunl Turnpike Tpke Underpass Upas Union Un Unions Uns Valley Vly Valleys Vlys Viaduct Via Vdct View Vw Views Vws Village Vlg
Villages Vlgs Ville Vl Vista Vis Walk Walks Wall Way Wy Ways Well Wl Wells Wls`;

const OTHERS = `Close Cl Crescent Mews Parade Pde Esplanade Esp Promenade Prom Quay Rise Chase Circuit Cct Concourse Copse Deviation Entrance
Glade Grange Link Reserve Steps Broadway Roadside Centreway Cross Gate Gardens Wynd Drove Hey Hollow Approach App Gardens Bank Banks
Boardwalk Bowl Brace Corso Cutting Dell Dene Domain Edge Elbow End Fairway Firetrail Frontage Gully Highroad Hub Interchange Laneway
Line Lookout Nook Outlook Pathway Pocket Port Ramble Reach Retreat Ridgeway Ring Serviceway Strand Tarn Thoroughfare Top Tor Towers
Turn Twist Vale Verge Villas Vue Waters Waterway Wharf Yard Amble Anchorage Block Byway Crossway Lower Upper Meander Rapid Riviera
Slope Stairs Tollway Bridle Busway Crief Dash Dip Driveway Easement Flats Ford Gap Glen Highroad Hike Keys Mile Motorway Nook Outlook Pass
Quays Rotary Rue Shunt Spur Stairway Subway Tramway Underpass Viewway Walkway Wynd
Crt Terr Pky Ptway Circt Hghlds Villge Tline Rdpt Trnabt Lkout Landng Harbr Grnds Gdns Crnrs Conc Boul Sideroad Concession Townline`;

const words = (s: string): string[] => [...new Set(s.split(/\s+/).filter(Boolean))];

/** Two-letter abbreviations common enough in addresses to trust; the others (`Pr`, `Is`, `Un`, ...) read as words or units. */
const TWO_LETTER = new Set(['St', 'Rd', 'Dr', 'Ln', 'Ct', 'Pl', 'Av', 'Wy', 'Pt', 'Cv', 'Cl', 'Sq']);

export const SUFFIXES: readonly string[] = words(`${C1} ${OTHERS}`)
  .filter((w) => w.length !== 2 || TWO_LETTER.has(w))
  .sort((a, b) => b.length - a.length);

export const GERMAN_SUFFIXES: readonly string[] = [
  'straße',
  'strasse',
  'str.',
  'weg',
  'allee',
  'platz',
  'gasse',
  'ring',
  'damm',
  'ufer',
  'steig',
  'pfad',
  'chaussee',
  'markt',
  'graben',
  'kamp',
  'stieg',
  'twiete',
  'promenade',
  'brücke',
  'hof',
  'berg',
  'tor',
  'wall',
  'wiese',
  'anger',
  'zeile',
  'bogen',
  'winkel',
  'garten',
];

export const UNIT_WORDS =
  'Apartment|Apt|Suite|Ste|Unit|Flat|Studio|Room|Rm|Floor|Fl|Level|Lvl|Building|Bldg|Shop|Lot|Office|Ofc|Dept|Department|Penthouse|PH|Trailer|Space|Hangar|Pier|Slip|Stop|Box';
